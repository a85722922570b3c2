/**
 * What a list store answers before it reads a page's rows: each row's id with the bytes of its large
 * stored values (meta), taken from their stored text's length without reading the text, so that a
 * list page can be cut to its byte budget before megabytes are read (services/pages).
 */
export interface SizedRow {
  id: string;
  /** UTF-8 bytes of the row's large stored JSON values, as stored (and so as answered). */
  bytes: number;
}

/** The byte order bounds a list page's rows fall in: from `cursor` and up to `until`, both inclusive. */
export interface IdRange {
  /** From this id (inclusive), in byte order. */
  cursor?: string;
  /** Up to this id (inclusive), in byte order: the last row of a page planned from its sizes. */
  until?: string;
}
