// The real Node runtime composed in-process the way its generated server entry does it (SQLite
// adapter -> stores -> Node agent coordinator -> dispatch queue -> configured runtime), pointed
// at a given database file. Nothing of the runtime is changed or wrapped here.
import { sqlite } from '@flue/runtime/node';
import { defineAgent } from '@flue/runtime';
import {
	Bash,
	InMemoryFs,
	bashFactoryToSessionEnv,
	configureFlueRuntime,
	createFlueContext,
	createNodeAgentCoordinator,
	createNodeDispatchQueue,
	createRuntimeActivityGate,
	resolveModel,
} from '@flue/runtime/internal';
import { FAKE_MODEL } from './fake-model.mjs';
import { tools } from './tools.mjs';

const INSTRUCTIONS = 'You are the scripted test agent. Follow the scripted task marker in the input.';

/** The fixtures' four agents, plus a plain one for every other name in `extraNames`. */
export function agentsFor(extraNames = []) {
	const base = { model: FAKE_MODEL, instructions: INSTRUCTIONS, tools, compaction: false };
	const route = async (_c, next) => next();
	const agent = (name, extra = {}) => ({ name, route, definition: defineAgent(() => ({ ...base, ...extra })) });
	const agents = [
		agent('worker'),
		agent('compactor', { compaction: {} }),
		agent('fragile', { durability: { maxAttempts: 1 } }),
		agent('hasty', { durability: { timeoutMs: 5_000 } }),
	];
	for (const name of extraNames) if (!agents.some((a) => a.name === name)) agents.push(agent(name));
	return agents;
}

export async function startRuntime({ dbPath, extraAgentNames = [] }) {
	const adapter = sqlite(dbPath);
	if (adapter.migrate) await adapter.migrate();
	const { executionStore, runStore, eventStreamStore } = await adapter.connect();
	const submissions = executionStore.submissions;
	const sessions = executionStore.sessions;
	const agents = agentsFor(extraAgentNames);
	const createDefaultEnv = async () => bashFactoryToSessionEnv(() => new Bash({ fs: new InMemoryFs() }));
	const createContext = ({ id, agentName, request, initialEventIndex, dispatchId }) =>
		createFlueContext({
			id,
			agentName,
			dispatchId,
			initialEventIndex,
			env: {},
			req: request,
			agentConfig: { resolveModel },
			createDefaultEnv,
			defaultStore: sessions,
			submissionStore: submissions,
		});
	const activityGate = createRuntimeActivityGate();
	const coordinator = createNodeAgentCoordinator({ submissions, sessions, agents, createContext, eventStreamStore, activityGate });
	configureFlueRuntime({
		target: 'node',
		devMode: false,
		temporaryLocalExposure: false,
		agents,
		workflows: [],
		createAgentAdmission: (agentName, instanceId) => coordinator.createAdmission(agentName, instanceId),
		dispatchQueue: createNodeDispatchQueue(coordinator),
		activityGate,
		admitWorkflow: async () => {
			throw new Error('no workflows in these tests');
		},
		channelHandlers: {},
		createWorkflowContext: () => {
			throw new Error('no workflows in these tests');
		},
		runStore,
		eventStreamStore,
	});
	return { adapter, coordinator, submissions, sessions, eventStreamStore, agents, createContext };
}
