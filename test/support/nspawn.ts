/**
 * A throwaway machine with a real systemd for the unit file: `systemd-nspawn --volatile=yes` boots
 * this machine's own /usr with an empty /etc and /var in memory, so nothing of the host's
 * configuration or state is used or changed. Host directories are bound in read-only; the
 * container shares the host's network, so its services answer on 127.0.0.1. Commands run inside
 * through nsenter. The container is ended by the PID of the nspawn process that was started here.
 */
import type { Subprocess } from "bun";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Container {
  /** PID (on the host) of the container's systemd. */
  initPid: number;
  /** Runs a command inside as root; never throws on a non-zero exit. */
  run(cmd: string[], opts?: { stdin?: string; timeoutMs?: number }): { code: number; stdout: string; stderr: string };
  /** `systemctl show <unit> -p <props>` as an object. */
  show(unit: string, ...props: string[]): Record<string, string>;
  /** Powers the container off and waits for nspawn to exit (SIGKILL by PID after the deadline). */
  stop(): Promise<void>;
  /** The console output so far (boot messages), for failure messages. */
  console(): string;
}

const BOOT_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

/** Why the container cannot be started here, or undefined. */
export function nspawnMissing(): string | undefined {
  for (const [program, pkg] of [["systemd-nspawn", "systemd-container"], ["nsenter", "util-linux"], ["systemctl", "systemd"]] as const) {
    if (!Bun.which(program)) return `${program} is not installed (apt-get install -y ${pkg})`;
  }
  if (process.getuid?.() !== 0) return "systemd-nspawn needs root";
  return undefined;
}

/**
 * The container's init: the child of nspawn that is PID 1 in its own namespace. nspawn first forks
 * an intermediate child that sets up the mounts and exits once init runs; taking that one would
 * leave every later nsenter aimed at a process that is gone.
 */
export function containerInit(nspawnPid: number): number | undefined {
  const children = Bun.spawnSync(["pgrep", "-P", String(nspawnPid)], { stdout: "pipe" }).stdout.toString().trim().split("\n").filter(Boolean);
  for (const pid of children) {
    let status = "";
    try {
      status = readFileSync(`/proc/${pid}/status`, "utf8");
    } catch {
      continue; // already gone
    }
    // "NSpid:\t<host pid>\t1" for a process that is PID 1 of a nested PID namespace.
    const nsPids = /^NSpid:\s*(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/) ?? [];
    if (nsPids.length > 1 && nsPids.at(-1) === "1") return Number(pid);
  }
  return undefined;
}

async function collect(stream: ReadableStream<Uint8Array>, into: { text: string }): Promise<void> {
  const decoder = new TextDecoder();
  for await (const chunk of stream) into.text += decoder.decode(chunk, { stream: true });
}

/**
 * Boots the container with `binds` (`host:container`, read-only) and waits until its boot has
 * finished. With an empty /etc the first boot applies the unit presets; a preset of our own enables
 * the units in `enable` (as `systemctl enable` would, from their [Install] sections) and disables
 * everything else, so the services the host happens to have installed (databases, timers, network
 * managers) neither start in the container nor reach the network it shares with the host.
 */
export async function bootContainer(name: string, binds: string[], enable: string[] = []): Promise<Container> {
  const presets = mkdtempSync(join(tmpdir(), "tollgate-nspawn-preset-"));
  writeFileSync(join(presets, "00-tollgate-test.preset"), [...enable.map((unit) => `enable ${unit}`), "disable *", ""].join("\n"));
  const proc: Subprocess<"ignore", "pipe", "pipe"> = Bun.spawn([
    "systemd-nspawn", "--quiet", "--boot", "--directory=/", "--volatile=yes", "--register=no", "--keep-unit",
    `--machine=${name}`, ...[...binds, `${presets}:/etc/systemd/system-preset`].map((b) => `--bind-ro=${b}`),
    // Arguments for the container's systemd: no interactive first-boot questions.
    "--", "systemd.firstboot=off",
  ], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const output = { text: "" };
  void collect(proc.stdout, output);
  void collect(proc.stderr, output);
  const container: Container = {
    initPid: 0,
    run(cmd, opts = {}) {
      const r = Bun.spawnSync(["nsenter", "--target", String(container.initPid), "--all", ...cmd], {
        stdin: opts.stdin === undefined ? "ignore" : Buffer.from(opts.stdin), stdout: "pipe", stderr: "pipe", timeout: opts.timeoutMs,
      });
      return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
    },
    show(unit, ...props) {
      const out = container.run(["systemctl", "show", unit, ...props.map((p) => `--property=${p}`)]).stdout;
      return Object.fromEntries(out.trim().split("\n").filter(Boolean).map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        // nspawn answers SIGTERM by asking the container's systemd to power off.
        process.kill(proc.pid, "SIGTERM");
        const timer = setTimeout(() => process.kill(proc.pid, "SIGKILL"), STOP_TIMEOUT_MS);
        await proc.exited;
        clearTimeout(timer);
      }
      rmSync(presets, { recursive: true, force: true });
    },
    console: () => output.text,
  };
  const deadline = Date.now() + BOOT_TIMEOUT_MS;
  try {
    while (!container.initPid) {
      if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`the container did not start:\n${output.text}`);
      container.initPid = containerInit(proc.pid) ?? 0;
      if (!container.initPid) await Bun.sleep(20);
    }
    // Blocks until the boot has finished, whether every unit started ("running") or not ("degraded").
    let state = "";
    while (!["running", "degraded"].includes(state)) {
      if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`the container did not finish booting (${state}):\n${output.text}`);
      state = container.run(["systemctl", "is-system-running", "--wait"], { timeoutMs: Math.max(1, deadline - Date.now()) }).stdout.trim();
      // Before systemd opens its socket, systemctl fails at once: ask again shortly.
      if (!["running", "degraded"].includes(state)) await Bun.sleep(50);
    }
  } catch (e) {
    await container.stop();
    throw e;
  }
  return container;
}
