import { setOverrideContract } from "../ratelimit/set-override.contract.ts";

setOverrideContract("ratelimits");
