/**
 * Reading chevrotain's concrete syntax tree by child name (phase build-ast): a child the grammar guarantees (`node`,
 * `token`), an optional or repeated one (`optionalNode`, `nodes`, `tokens`), and whether one is there (`has`).
 */
import type { CstElement, CstNode, IToken } from "chevrotain";

export function isToken(el: CstElement): el is IToken {
  return (el as IToken).image !== undefined;
}

export function has(n: CstNode, key: string): boolean {
  return (n.children[key]?.length ?? 0) > 0;
}

export function node(n: CstNode, key: string): CstNode {
  return n.children[key]![0] as CstNode;
}

export function nodes(n: CstNode, key: string): CstNode[] {
  return (n.children[key] ?? []) as CstNode[];
}

export function optionalNode<R>(n: CstNode, key: string, f: (c: CstNode) => R): R | null {
  const c = n.children[key]?.[0];
  return c ? f(c as CstNode) : null;
}

export function token(n: CstNode, key: string): IToken {
  return n.children[key]![0] as IToken;
}

export function tokens(n: CstNode, key: string): IToken[] {
  return (n.children[key] ?? []) as IToken[];
}
