import { limitContract } from "../ratelimit/limit.contract.ts";

limitContract("ratelimits");
