import { deleteOverrideContract } from "../ratelimit/delete-override.contract.ts";

deleteOverrideContract("ratelimits");
