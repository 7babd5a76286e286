// Run one crash scenario (scenarios.mjs) against the real @flue/runtime 2.1.0 and let it be killed.
//
//   node crash.mjs --scenario NAME --db DB [--side SIDE] [--timeout-ms N]
//
// Starts the runtime on DB (flue's built-in sqlite() adapter, composed as start() composes it:
// runtime.mjs), the scripted faux model in crash mode (model.mjs), admits the scenario's
// submissions through flue's own entry points, and is SIGKILLed at the scenario's crash point
// (exit status 137, seen by the caller): after or before a call of flue's own submission store or
// conversation stream store, at a scripted model call, or from a tool hook. Nothing is written
// to the database but what flue itself wrote up to the kill. Exits 3 if the crash point was not
// reached within --timeout-ms (default 30 s), 2 on bad arguments.
import { createScriptedModel } from './model.mjs';
import { startRuntime } from './runtime.mjs';
import { appendEvent, configureSideFile, killSelf } from './sidefile.mjs';
import { setStepHook, setToolStartHook } from './tools.mjs';
import { SCENARIOS, SCRIPTS } from './scenarios.mjs';

const marker = (script, tag) => `[[script:${script}#${tag}]] scripted turnscope task "${script}"`;
const log = (...args) => process.stderr.write(`${args.join(' ')}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function parseArgs(argv) {
	const out = {};
	for (let i = 0; i < argv.length; i += 2) {
		if (!argv[i].startsWith('--') || argv[i + 1] === undefined) return undefined;
		out[argv[i].slice(2)] = argv[i + 1];
	}
	return out;
}

function makeCtl(rt, scenarioName) {
	const toolWatchers = [];
	const fire = (watchers) => (t) => {
		for (const w of watchers) {
			if (!w.pred(t)) continue;
			Promise.resolve()
				.then(() => w.fn(t))
				.catch((error) => {
					log(`[crash] hook failed: ${error?.stack ?? error}`);
					appendEvent({ event: 'hook_failed', error: String(error?.message ?? error) });
				});
		}
	};
	setToolStartHook(fire(toolWatchers));
	setStepHook(() => {});
	const admitted = (rec) => appendEvent({ event: 'admitted', scenario: scenarioName, ...rec });
	return {
		async dispatch(agent, instance, script, tag) {
			const receipt = await rt.dispatch(agent, instance, marker(script, tag));
			admitted({ kind: 'dispatch', agent, instance, script, tag, submissionId: receipt.submissionId });
			return receipt.submissionId;
		},
		async direct(agent, instance, script, tag) {
			const receipt = await rt.direct(agent, instance, marker(script, tag));
			admitted({ kind: 'direct', agent, instance, script, tag, submissionId: receipt.submissionId });
			return receipt.submissionId;
		},
		async abort(agent, instance) {
			appendEvent({ event: 'abort_requested', agent, instance });
			await rt.abort(agent, instance);
		},
		waitIdle: () => rt.waitForIdle(),
		kill: (reason) => killSelf(reason),
		onToolStart(pred, fn) {
			toolWatchers.push({ pred, fn });
		},
		trace() {},
	};
}

const args = parseArgs(process.argv.slice(2));
const scenario = args && SCENARIOS[args.scenario];
if (!args?.db || !scenario) {
	log(`usage: crash.mjs --scenario NAME --db DB [--side SIDE] [--timeout-ms N]; scenarios: ${Object.keys(SCENARIOS).join(' ')}`);
	process.exit(2);
}
if (args.side) configureSideFile(args.side, `crash:${args.scenario}`);
const { providers } = createScriptedModel({ scripts: SCRIPTS, mode: 'crash' });
appendEvent({ event: 'scenario_start', scenario: args.scenario });
const rt = await startRuntime({ dbPath: args.db, providers, rules: scenario.rules ?? [], trace: () => Boolean(args.side), log });
await scenario.run(makeCtl(rt, args.scenario));
const limit = Number(args['timeout-ms'] ?? 30_000);
await sleep(limit);
log(`[crash] crash point of ${args.scenario} not reached within ${limit} ms`);
appendEvent({ event: 'crash_point_not_reached', scenario: args.scenario });
process.exit(3);
