/**
 * One racer of master-key.test.ts, as a child process: prints "ready" once its modules are
 * loaded, waits for a line on stdin (the start signal, sent to every racer at once), then loads
 * the master key of the data dir in argv[2], creating it when missing, and prints it in base64.
 */
import { loadMasterKey } from "../../src/bootstrap.ts";

const dataDir = process.argv[2];
if (!dataDir) throw new Error("usage: master-key-racer.ts <data dir>");
console.log("ready");
for await (const _line of console) break;
console.log(Buffer.from(loadMasterKey(dataDir, undefined)).toString("base64"));
