// The flags every Chromium of Gantry's starts with (lib/browser/locate.ts): one --disable-features, since Chromium reads
// only the last; features a caller adds are merged into ours.
import assert from 'node:assert/strict';
import { chromeFlags, offlineChromeFlags } from '../../lib/browser/index.js';

const features = (flags: readonly string[]) => {
  const found = flags.filter((flag) => flag.startsWith('--disable-features='));
  assert.equal(found.length, 1, `one --disable-features: ${found.join(' ')}`);
  return found[0]!.slice('--disable-features='.length).split(',');
};

describe('browser: the flags Chromium starts with', () => {
  it('the offline flags switch off the omnibox WebUI popups (a renderer of their own in headless Chromium) and the features that call out', () => {
    const off = features(offlineChromeFlags);
    for (const name of ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup', 'Translate', 'OptimizationHints', 'MediaRouter', 'DialMediaRouteProvider'])
      assert.ok(off.includes(name), `${name} is switched off`);
  });

  it("a caller's --disable-features is merged into ours, not put after it (where it would replace ours); other flags keep their order", () => {
    const flags = chromeFlags(['--mute-audio', '--disable-features=Foo, Translate,,Bar', '--user-data-dir=/tmp/x']);
    const off = features(flags);
    assert.deepEqual(off, [...features(offlineChromeFlags), 'Foo', 'Bar']);
    const rest = flags.filter((flag) => !flag.startsWith('--disable-features='));
    assert.deepEqual(rest, [...offlineChromeFlags.filter((flag) => !flag.startsWith('--disable-features=')), '--mute-audio', '--user-data-dir=/tmp/x']);
    assert.deepEqual(chromeFlags(), [...offlineChromeFlags]);
  });
});
