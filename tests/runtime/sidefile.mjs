// The side file: one JSON line per tool execution and model call, appended synchronously so a
// line is on disk before anything that follows it. The fixtures' side files hold the crash run's
// lines; a resume appends its own, so a tool call id seen twice ran twice.
import { appendFileSync } from 'node:fs';

let sideFile;
let runLabel = 'run';

export function configureSideFile(path, label) {
	sideFile = path;
	runLabel = label;
}

export function appendEvent(record) {
	if (!sideFile) return;
	appendFileSync(sideFile, `${JSON.stringify({ ts: Date.now(), pid: process.pid, run: runLabel, ...record })}\n`);
}
