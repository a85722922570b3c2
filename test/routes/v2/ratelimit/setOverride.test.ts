import { setOverrideContract } from "./set-override.contract.ts";

setOverrideContract("ratelimit");
