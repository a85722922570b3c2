import { getOverrideContract } from "../ratelimit/get-override.contract.ts";

getOverrideContract("ratelimits");
