// The harness's agents: 2.x agent functions (hooks + statics), all with the
// recorded tools and the scripted model.
//   worker     default durability (10 attempts, 1 h timeout), fast model
//   streamer   same, slow-streaming model (mid-stream crashes)
//   fragile    durability.maxAttempts 1: any interruption exhausts the budget
//   hasty      durability.timeoutMs 5000: the deadline passes before the 30 s
//              lease expires
//   compactor  compaction keeps almost nothing, so an overflow can compact
import { useModel, useTool } from '@flue/runtime';
import { MODEL, SLOW_MODEL } from './model.mjs';
import { harnessTools } from './tools.mjs';

export const AGENT_INSTRUCTIONS =
	'You are the turnscope test agent. Follow the scripted task marker in the input.';

function render(model, options) {
	useModel(model, options);
	for (const tool of harnessTools) useTool(tool);
	return AGENT_INSTRUCTIONS;
}

export function Worker() {
	return render(MODEL);
}
Worker.agentName = 'worker';

export function Streamer() {
	return render(SLOW_MODEL);
}
Streamer.agentName = 'streamer';

export function Fragile() {
	return render(MODEL);
}
Fragile.agentName = 'fragile';
Fragile.durability = { maxAttempts: 1 };

export function Hasty() {
	return render(MODEL);
}
Hasty.agentName = 'hasty';
Hasty.durability = { timeoutMs: 5_000 };

export function Compactor() {
	return render(MODEL, { compaction: { keepRecentTokens: 1 } });
}
Compactor.agentName = 'compactor';

export const AGENTS = [Worker, Streamer, Fragile, Hasty, Compactor];
export const AGENT_BY_NAME = Object.fromEntries(AGENTS.map((a) => [a.agentName, a]));
