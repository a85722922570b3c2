import { deleteOverrideContract } from "./delete-override.contract.ts";

deleteOverrideContract("ratelimit");
