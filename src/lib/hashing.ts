/** base64 (standard, padded) of SHA-256 of the UTF-8 string: how every key is stored and looked up. */
export function sha256Base64(value: string): string {
  return Bun.SHA256.hash(value, "base64");
}
