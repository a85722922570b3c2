import { listOverridesContract } from "../ratelimit/list-overrides.contract.ts";

listOverridesContract("ratelimits");
