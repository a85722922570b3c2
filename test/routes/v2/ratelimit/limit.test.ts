import { limitContract } from "./limit.contract.ts";

limitContract("ratelimit");
