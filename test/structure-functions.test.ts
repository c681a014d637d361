/**
 * Issue 37 item 4, beside the file-length check (structure-imports.test.ts): a file under its cap can still
 * hold one function that does everything (Daemon.start was 247 lines, createMcpHttpRoute 189). Every
 * function, method, constructor, accessor and arrow function of the product (daemon/, bridge-client/,
 * owner-ui/, common/, examples/; tests excluded) is measured by TypeScript's own reading of the file, from its first
 * token to its last (its doc comment excluded, the functions nested in it included), and none is past
 * FUNCTION_MAX_LINES, with no exceptions. A long function is split into named steps, not cut into files.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const PRODUCT = ['common', 'daemon', 'bridge-client', 'owner-ui', 'examples'];

/** The longest a function may be, in lines. */
const FUNCTION_MAX_LINES = 80;

/** The product's .ts files (tests excluded), relative to the repository, with '/' separators. */
function productFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(root, dir))) {
      const path = `${dir}/${name}`;
      if (name === 'node_modules' || name === 'dist') continue;
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) out.push(path);
    }
  };
  for (const dir of PRODUCT) walk(dir);
  return out.sort();
}

/**
 * What a function is called: its own name, or the variable or property it is the value of; an arrow passed
 * to a call is `<the function it is written in>/<the callee>()`, so a name does not move with a line.
 */
function nameOf(node: ts.SignatureDeclaration, source: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  if (node.name !== undefined) return node.name.getText(source);
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText(source);
  let outer: ts.Node = parent;
  while (!ts.isSourceFile(outer) && !(ts.isFunctionLike(outer) && nameable(outer))) outer = outer.parent;
  const within = ts.isSourceFile(outer) ? '' : `${nameOf(outer as ts.SignatureDeclaration, source)}/`;
  const callee = ts.isCallExpression(parent) ? `${parent.expression.getText(source)}()` : '<anonymous>';
  return `${within}${callee}`;
}

/** Whether a function has a name of its own or of what it is assigned to. */
function nameable(node: ts.Node): boolean {
  const p = node.parent;
  return (
    ts.isConstructorDeclaration(node) ||
    (node as ts.SignatureDeclaration).name !== undefined ||
    ts.isVariableDeclaration(p) ||
    ts.isPropertyAssignment(p) ||
    ts.isPropertyDeclaration(p)
  );
}

/** Every function of `text` longer than `max` lines, as 'file#name: N lines'. */
function longFunctions(file: string, text: string, max: number): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > max) found.push(`${file}#${nameOf(node, source)}: ${lines} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('functions of one step (issue 37 item 4)', () => {
  const long = productFiles().flatMap((file) =>
    longFunctions(file, readFileSync(join(root, file), 'utf8'), FUNCTION_MAX_LINES),
  );

  it(`no product function is past ${FUNCTION_MAX_LINES} lines`, () => {
    expect(long).toEqual([]);
  });

  it('the check sees a long function, method, arrow function and accessor', () => {
    const body = (n: number): string =>
      Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const text = [
      `function tall(): void {\n${body(80)}\n}`,
      `function short(): void {\n${body(3)}\n}`,
      `class C {\n  m(): void {\n${body(80)}\n  }\n  get g(): number {\n${body(80)}\n    return 1;\n  }\n}`,
      `const arrow = (): void => {\n${body(80)}\n};`,
    ].join('\n');
    expect(longFunctions('x.ts', text, FUNCTION_MAX_LINES)).toEqual([
      'x.ts#tall: 82 lines',
      'x.ts#m: 82 lines',
      'x.ts#g: 83 lines',
      'x.ts#arrow: 82 lines',
    ]);
  });
});
