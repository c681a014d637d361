/**
 * Tiny DOM builders. Text always goes in as text nodes and attributes through setAttribute, never through
 * HTML strings: the panel shows text an AI wrote (justification, argv, messages), so nothing it says may
 * become markup or script (strict CSP, issue 4). And every text child shows control and bidi characters as
 * visible escapes (`\u202e`; newline and tab keep their layout): whatever card, list or dialog a text lands
 * in, it cannot read in an order other than its own (issue 19, contract 5 (v2)).
 */
import { escapeKeepingLayout } from '../common/visible.js';

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | undefined>;

function setAttrs(node: Element, attrs: Attrs): void {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? '' : String(value));
  }
}

function append(node: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    node.appendChild(
      typeof c === 'string' || typeof c === 'number'
        ? document.createTextNode(escapeKeepingLayout(String(c)))
        : c,
    );
  }
}

/** An HTML element with attributes and children. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  append(node, children);
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element with attributes and children. */
export function svg(tag: string, attrs: Attrs = {}, ...children: Child[]): SVGElement {
  const node = document.createElementNS(SVG_NS, tag) as SVGElement;
  setAttrs(node, attrs);
  append(node, children);
  return node;
}

/** Replaces a node's text, escaped as `el` escapes its text children (a message may quote an AI's words). */
export function setText(node: Node, text: string): void {
  node.textContent = escapeKeepingLayout(text);
}

/** The element with this id, or an error naming it (the page and the script ship together). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`panel: #${id} is missing from the page`);
  return node as T;
}
