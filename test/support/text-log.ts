/**
 * Reads a TOLLGATE_LOG_FORMAT=text line back into the object its JSON twin holds (time, level, msg
 * and the fields), so tests can compare the two formats field by field.
 */

/** Where the value starting at `start` ends: a space outside any string or bracket, or the line's end. */
function endOfValue(line: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < line.length; i++) {
    const c = line[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "[" || c === "{") depth++;
    else if (c === "]" || c === "}") depth--;
    else if (c === " " && depth === 0) return i;
  }
  return line.length;
}

/** A bare token is a string unless it reads as JSON (a number, literal, array or object). */
function valueOf(raw: string): unknown {
  return /^["[{\d-]/.test(raw) || raw === "true" || raw === "false" || raw === "null" ? JSON.parse(raw) : raw;
}

export function parseTextLine(line: string): Record<string, unknown> {
  const head = /^(\S+) (DEBUG|INFO|WARN|ERROR) /.exec(line);
  if (!head) throw new Error(`not a text log line: ${line}`);
  const parsed: Record<string, unknown> = { time: head[1], level: head[2]!.toLowerCase() };
  let i = head[0].length;
  if (line[i] === '"') {
    const end = endOfValue(line, i);
    parsed.msg = JSON.parse(line.slice(i, end));
    i = end;
  } else {
    const firstField = / [A-Za-z_]\w*=/.exec(line.slice(i));
    const end = firstField ? i + firstField.index : line.length;
    parsed.msg = line.slice(i, end);
    i = end;
  }
  while (i < line.length) {
    const eq = line.indexOf("=", i);
    const key = line.slice(i + 1, eq);
    const end = endOfValue(line, eq + 1);
    parsed[key] = valueOf(line.slice(eq + 1, end));
    i = end;
  }
  return parsed;
}
