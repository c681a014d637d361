/**
 * The catalog kind's fields: none. Its tool's name is the owner protocol's (common/kinds.ts Tool), and its
 * commands carry no fields of their own: the catalog's argv is the command's `display`. The file stays so
 * every kind folder has the same parts (test/structure-kinds.test.ts).
 */

export {};
