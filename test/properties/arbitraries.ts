/** Generators more than one property file builds its inputs from. */
import { fc } from './fc.js';

/** Valid JSON, then one edit: a character deleted, inserted or replaced. Near-valid text finds the edge cases. */
export const nearJson: fc.Arbitrary<string> = fc
  .tuple(
    fc.json({ maxDepth: 3 }),
    fc.nat(),
    fc.constantFrom('delete', 'insert', 'replace', 'none'),
    fc.constantFrom('"', '\\', ',', ':', '{', '}', '[', ']', '-', '.', 'e', '0', ' ', '\u0001', 'x', '\uFEFF', 'u'),
  )
  .map(([json, at, edit, c]) => {
    const i = json.length === 0 ? 0 : at % json.length;
    if (edit === 'delete') return json.slice(0, i) + json.slice(i + 1);
    if (edit === 'insert') return json.slice(0, i) + c + json.slice(i);
    if (edit === 'replace') return json.slice(0, i) + c + json.slice(i + 1);
    return json;
  });
