/** What the rate-limit service takes and answers: a check, its outcome, an override, and where decisions are recorded. */

export interface LimitInput {
  /** Namespace id or name. */
  namespace: string;
  identifier: string;
  limit: number;
  /** Window length in ms. */
  duration: number;
  /** Default 1; 0 only reports. */
  cost?: number;
}

export interface LimitOutcome {
  success: boolean;
  limit: number;
  remaining: number;
  /** End of the current window, Unix ms. */
  reset: number;
  overrideId?: string;
}

export interface MultiLimitCheck {
  namespace: string;
  identifier: string;
  limit: number;
  remaining: number;
  reset: number;
  passed: boolean;
  overrideId?: string;
}

export interface OverrideView {
  overrideId: string;
  identifier: string;
  limit: number;
  duration: number;
}

export interface OverridePage {
  items: OverrideView[];
  /** Id of the first override of the next page; undefined on the last page. */
  cursor: string | undefined;
}

/** Where each decision of `limit` / `multiLimit` goes, for analytics; called on every check, so it must be cheap. */
export interface RatelimitDecisionRecorder {
  record(workspaceId: string, namespaceId: string, passed: boolean, timeMs: number): void;
}
