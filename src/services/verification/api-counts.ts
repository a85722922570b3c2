/**
 * Verifications counted by API and outcome code, for /metrics. The number of APIs is the
 * operator's, so the label set is capped: APIs first seen once `maxApis` have their own count
 * share the one `other` series, which keeps a scrape's size and this map's memory bounded.
 */
export const OTHER_APIS = "other";

export class VerificationCountsByApi {
  private readonly byApi = new Map<string, Map<string, number>>();

  constructor(private readonly maxApis: number) {}

  /** One verification of a key of `apiId` that answered `code`. */
  count(apiId: string, code: string): void {
    let codes = this.byApi.get(apiId);
    if (codes === undefined) {
      const label = this.byApi.size - (this.byApi.has(OTHER_APIS) ? 1 : 0) < this.maxApis ? apiId : OTHER_APIS;
      codes = this.byApi.get(label) ?? new Map<string, number>();
      this.byApi.set(label, codes);
    }
    codes.set(code, (codes.get(code) ?? 0) + 1);
  }

  /** Every series: API id (or `other`), code, count. */
  *series(): Generator<[apiId: string, code: string, count: number]> {
    for (const [apiId, codes] of this.byApi) {
      for (const [code, n] of codes) yield [apiId, code, n];
    }
  }
}
