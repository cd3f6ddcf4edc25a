/** The identity of a watch keyword: what makes two spellings the same entry. Pure. */

/** NFKC (full-width and half-width forms alike), whitespace collapsed and trimmed, lower-cased. */
export function keywordKey(keyword: string): string {
  return keyword.normalize('NFKC').replace(/\s+/g, ' ').trim().toLowerCase();
}
