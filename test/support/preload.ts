/**
 * Loaded before every test file (bunfig.toml): what the whole test process shares is stopped after
 * the last file, here, since bun test fires no exit event.
 */
import { afterAll } from "bun:test";
import { stopSharedPostgres } from "./cluster-backend.ts";

afterAll(stopSharedPostgres);
