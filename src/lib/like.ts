/** SQL LIKE patterns for user-typed search text. */

/** A pattern for "contains `text`": `%`, `_` and `\` escaped so they match literally (with `ESCAPE '\'`). */
export function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
