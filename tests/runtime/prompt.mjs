// Submit one new prompt to an existing agent session through the runtime's public API and let
// the runtime take the turn.
//
//   node prompt.mjs --db DB --side SIDE --session-key KEY --text TEXT
//
// Composes the runtime as runtime.mjs does, with the fake model, and dispatches TEXT (as the
// fixtures' inputs are, `{ task: TEXT }`) to the session KEY (`agent-session:[instance, …]`)
// with `dispatch()` of `@flue/runtime`, to the agent that session's submissions name; then
// drains the queue and prints one JSON report on stdout: the new submission's status, error and
// script tag, and per tool call id how many times the tool ran over every run in SIDE. Nothing
// is recovered first (no reconcileSubmissions()): hand it a database with nothing stuck.
// DB and SIDE are changed in place: run it on copies.
import { existsSync, readFileSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { dispatch } from '@flue/runtime';
import { installFakeModel } from './fake-model.mjs';
import { startRuntime } from './runtime.mjs';
import { appendEvent, configureSideFile } from './sidefile.mjs';

function arg(name) {
	const i = process.argv.indexOf(`--${name}`);
	if (i < 0 || i + 1 >= process.argv.length) throw new Error(`usage: prompt.mjs --db DB --side SIDE --session-key KEY --text TEXT (missing --${name})`);
	return process.argv[i + 1];
}

const dbPath = arg('db');
const sidePath = arg('side');
const sessionKey = arg('session-key');
const text = arg('text');
const PREFIX = 'agent-session:';
if (!sessionKey.startsWith(PREFIX)) throw new Error(`not an agent session key: ${sessionKey}`);
const instance = JSON.parse(sessionKey.slice(PREFIX.length))[0];

function rows() {
	const db = new DatabaseSync(dbPath, { readOnly: true });
	try {
		return db
			.prepare('SELECT submission_id, session_key, status, error, payload FROM flue_agent_submissions ORDER BY sequence')
			.all();
	} finally {
		db.close();
	}
}

const before = rows();
const ofSession = before.filter((r) => r.session_key === sessionKey);
if (ofSession.length === 0) throw new Error(`no submission names session ${sessionKey}`);
const agent = JSON.parse(ofSession.at(-1).payload).agent;
const unsettled = before.filter((r) => r.status !== 'settled');
if (unsettled.length > 0) throw new Error(`unsettled submissions: ${unsettled.map((r) => r.submission_id).join(', ')}`);

configureSideFile(sidePath, `resume:prompt:${new Date().toISOString()}`);
installFakeModel();
const errors = [];
const consoleError = console.error;
console.error = (...a) => {
	errors.push(a.map((x) => (x instanceof Error ? `${x.name}: ${x.message}` : typeof x === 'string' ? x : JSON.stringify(x))).join(' '));
	consoleError(...a);
};
const rt = await startRuntime({ dbPath });
const receipt = await dispatch({ agent, id: instance, input: { task: text } });
const tag = [...text.matchAll(/\[\[script:[A-Za-z0-9_-]+#([A-Za-z0-9_-]+)\]\]/g)].at(-1)?.[1] ?? null;
appendEvent({ event: 'admitted', kind: 'dispatch', agent, instance, tag, submissionId: receipt.dispatchId });
await rt.coordinator.waitForIdle();
await rt.coordinator.shutdown(5_000);
rt.adapter.close?.();
console.error = consoleError;

const after = rows();
const added = after.filter((r) => !before.some((b) => b.submission_id === r.submission_id));
const lines = existsSync(sidePath) ? readFileSync(sidePath, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l)) : [];
const executions = {};
for (const l of lines) {
	if (l.event !== 'tool_start') continue;
	executions[l.toolCallId] = (executions[l.toolCallId] ?? 0) + 1;
}
const report = {
	db: dbPath,
	agent,
	instance,
	receipt,
	submissions: added.map((r) => ({ submissionId: r.submission_id, sessionKey: r.session_key, status: r.status, error: r.error ?? null })),
	toolExecutions: executions,
	doubleExecuted: Object.entries(executions).filter(([, n]) => n > 1).map(([id]) => id),
	runtimeErrorsLogged: errors,
};
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`, () => process.exit(0));
