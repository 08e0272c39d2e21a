// The shapes @googleapis/drive's TypeScript declarations give Drive v2 (they are generated from its discovery
// document, drive.v2.json): each method's response schema, each schema's properties with their JSON types, and the
// `kind` each resource "is always". A response of the embedded storage server is checked against them with `drive#`
// read as `storage#` (STO-BASE-PREFIX's renaming): a property the schema does not know, or a value of the wrong JSON
// type (`fileSize` is an int64 carried as a string, `labels.trashed` a boolean …), is a disagreement with Drive v2.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import ts from 'typescript';

const declarations = path.join(path.dirname(createRequire(import.meta.url).resolve('@googleapis/drive')), 'v2.d.ts');

interface Catalogue {
  schemas: Map<string, ts.InterfaceDeclaration>;
  /** `files.get` → `File`, `files.delete` → `void`, `files.export` → `unknown`. */
  methods: Map<string, string>;
  /** `File` → `drive#file`, from the `kind` property's documentation. */
  kinds: Map<string, string>;
}

let loaded: Catalogue | undefined;

function catalogue(): Catalogue {
  if (loaded) return loaded;
  const source = ts.createSourceFile(declarations, readFileSync(declarations, 'utf8'), ts.ScriptTarget.Latest, true);
  const schemas = new Map<string, ts.InterfaceDeclaration>();
  const methods = new Map<string, string>();
  const kinds = new Map<string, string>();
  const visit = (node: ts.Node) => {
    if (ts.isInterfaceDeclaration(node) && node.name.text.startsWith('Schema$')) {
      const name = node.name.text.slice('Schema$'.length);
      schemas.set(name, node);
      const kind = node.members.find((m) => ts.isPropertySignature(m) && m.name.getText() === 'kind');
      const doc = kind
        ? ts
            .getJSDocCommentsAndTags(kind)
            .map((d) => d.getText())
            .join(' ')
        : '';
      const fixed = /`?\b((?:drive|api)#\w+)`?/.exec(doc);
      if (fixed) kinds.set(name, fixed[1]!);
    }
    if (ts.isClassDeclaration(node) && node.name?.text.startsWith('Resource$')) {
      const resource = node.name.text.slice('Resource$'.length);
      const prefix = resource[0]!.toLowerCase() + resource.slice(1);
      for (const member of node.members) {
        if (!ts.isMethodDeclaration(member) || !member.type) continue;
        // The overload `(params?, options?: MethodOptions): Promise<GaxiosResponseWithHTTP2<Schema$X>>`.
        const options = member.parameters[1]?.type?.getText();
        if (options !== 'MethodOptions') continue;
        const inner = /GaxiosResponseWithHTTP2<(?:Schema\$)?(\w+)>/.exec(member.type.getText());
        if (inner) methods.set(`${prefix}.${member.name.getText()}`, inner[1]!);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  loaded = { schemas, methods, kinds };
  return loaded;
}

/** Every method of the client (`files.get`, …), the spec's 70 and the deprecated teamdrives.*. */
export function clientMethods(): string[] {
  return [...catalogue().methods.keys()];
}

/** The schema a method answers with (`File`), `void` or `unknown` (bytes). */
export function responseSchema(method: string): string {
  const schema = catalogue().methods.get(method);
  if (!schema) throw new Error(`@googleapis/drive v2 has no method ${method}`);
  return schema;
}

/** The `kind` Drive documents for a schema, renamed as the storage API renames it (`drive#file` → `storage#file`). */
export function storageKind(schema: string): string | undefined {
  return catalogue()
    .kinds.get(schema)
    ?.replace(/^drive#/, 'storage#');
}

function nonNull(type: ts.TypeNode): ts.TypeNode[] {
  if (ts.isUnionTypeNode(type))
    return type.types.filter((t) => !(ts.isLiteralTypeNode(t) && t.literal.kind === ts.SyntaxKind.NullKeyword) && t.kind !== ts.SyntaxKind.UndefinedKeyword);
  return [type];
}

function checkType(value: unknown, type: ts.TypeNode, at: string, problems: string[]): void {
  const options = nonNull(type);
  if (options.length !== 1) return; // no union of two real types in these declarations; accept rather than guess
  const t = options[0]!;
  const typeOf = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;
  const want = (expected: string) => {
    if (typeOf !== expected) problems.push(`${at}: ${typeOf} where Drive v2 has ${expected}`);
    return typeOf === expected;
  };
  switch (t.kind) {
    case ts.SyntaxKind.StringKeyword:
      return void want('string');
    case ts.SyntaxKind.BooleanKeyword:
      return void want('boolean');
    case ts.SyntaxKind.NumberKeyword:
      return void want('number');
    case ts.SyntaxKind.AnyKeyword:
    case ts.SyntaxKind.UnknownKeyword:
      return;
  }
  if (ts.isArrayTypeNode(t)) {
    if (want('array')) (value as unknown[]).forEach((v, i) => checkType(v, t.elementType, `${at}[${i}]`, problems));
    return;
  }
  if (ts.isTypeReferenceNode(t)) {
    const name = t.typeName.getText();
    if (name === 'Array' && t.typeArguments?.[0]) {
      if (want('array')) (value as unknown[]).forEach((v, i) => checkType(v, t.typeArguments![0]!, `${at}[${i}]`, problems));
      return;
    }
    if (name.startsWith('Schema$')) {
      if (want('object')) checkSchema(value as Record<string, unknown>, name.slice(7), at, problems);
      return;
    }
    return;
  }
  if (ts.isTypeLiteralNode(t)) {
    if (want('object')) checkMembers(value as Record<string, unknown>, t.members, at, problems);
  }
}

function checkMembers(value: Record<string, unknown>, members: ts.NodeArray<ts.TypeElement>, at: string, problems: string[]): void {
  const index = members.find(ts.isIndexSignatureDeclaration);
  const properties = new Map(members.filter(ts.isPropertySignature).map((m) => [m.name.getText(), m]));
  for (const [key, v] of Object.entries(value)) {
    const property = properties.get(key);
    if (property?.type) checkType(v, property.type, `${at}.${key}`, problems);
    else if (index) checkType(v, index.type, `${at}.${key}`, problems);
    else problems.push(`${at}.${key}: no such property in Drive v2`);
  }
}

/**
 * What in `value` disagrees with Drive v2's schema `schema` (an empty list when nothing does). A whole resource names
 * its kind; one cut down by a `fields` mask (`partial`) need not.
 */
export function shapeProblems(value: unknown, schema: string, options: { partial?: boolean } = {}): string[] {
  const declaration = catalogue().schemas.get(schema);
  if (!declaration) throw new Error(`@googleapis/drive v2 has no schema ${schema}`);
  const problems: string[] = [];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [`${schema}: not an object`];
  checkSchema(value as Record<string, unknown>, schema, schema, problems);
  const kind = storageKind(schema);
  if (kind && !options.partial && (value as { kind?: unknown }).kind === undefined)
    problems.push(`${schema}.kind: missing (Drive v2 always sends ${kind.replace('storage#', 'drive#')})`);
  return problems;
}

/** The members of a schema, and its `kind` when it has one and the value names one (Drive always sends it). */
function checkSchema(value: Record<string, unknown>, schema: string, at: string, problems: string[]): void {
  checkMembers(value, catalogue().schemas.get(schema)!.members, at, problems);
  const kind = storageKind(schema);
  if (kind && value.kind !== undefined && value.kind !== kind)
    problems.push(`${at}.kind: ${JSON.stringify(value.kind)} where Drive v2 has ${kind.replace('storage#', 'drive#')} (so ${kind} here)`);
}
