import { getOverrideContract } from "./get-override.contract.ts";

getOverrideContract("ratelimit");
