import { listOverridesContract } from "./list-overrides.contract.ts";

listOverridesContract("ratelimit");
