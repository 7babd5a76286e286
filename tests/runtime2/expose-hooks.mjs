// Node module-customization hook used only by the drivers that call flue's internals (through
// register-hooks.mjs).
//
// flue 2.1.0 bundles its submission-state classifier (`classifySubmissionState`,
// the `classifyConversationSubmission` wrapper its reconciler and resume call,
// `findTrailingPartialToolBatch`), its conversation reader/reducer
// (`loadReducedConversationState`, `getActiveConversationPath[Since]`) and the
// session-key helpers into one internal dist chunk without exporting them
// under these names, and the input entry id helper (`submissionEntryId`) into
// another. This hook appends an `export { ... }` line to each of those two
// chunks' source when it is loaded, so the driver calls flue's own,
// unmodified functions instead of re-implementing them. Nothing else in the
// chunks is changed; both are still loaded once (same URL) and shared with
// the rest of the runtime.
const EXPORTS = [
	{
		marker: 'function classifySubmissionState(',
		names: [
			'classifySubmissionState',
			'classifyConversationSubmission',
			'findTrailingPartialToolBatch',
			'countConsecutiveRetryableModelErrors',
			'getActiveConversationPath',
			'getActiveConversationPathSince',
			'loadReducedConversationState',
			'createReducedInstanceState',
			'reduceConversationRecords',
			'parseSessionStorageKey',
			'conversationScopeKey',
			'agentStreamPath',
			'toolOutcomeKey',
		],
	},
	{ marker: 'function submissionEntryId(', names: ['submissionEntryId'] },
];

// The older releases installed beside 2.1.0 under aliases (package.json), for the classifier's
// variants: only the classifier, whose names every 2.x defines.
const OLDER_EXPORTS = [
	{
		marker: 'function classifySubmissionState(',
		names: ['classifySubmissionState', 'classifyConversationSubmission', 'findTrailingPartialToolBatch'],
	},
];
const OLDER = ['/flue-runtime-2.0.0/dist/', '/flue-runtime-2.0.5/dist/'];

export async function load(url, context, nextLoad) {
	const result = await nextLoad(url, context);
	const older = OLDER.some((dir) => url.includes(dir));
	if ((!url.includes('/@flue/runtime/dist/') && !older) || !url.endsWith('.mjs') || result.format !== 'module') return result;
	const source = typeof result.source === 'string' ? result.source : Buffer.from(result.source).toString('utf8');
	const extra = (older ? OLDER_EXPORTS : EXPORTS)
		.filter((e) => source.includes(e.marker))
		.map((e) => `\nexport { ${e.names.map((n) => `${n} as __turnscope_${n}`).join(', ')} };\n`)
		.join('');
	if (!extra) return result;
	return { ...result, source: source + extra, shortCircuit: true };
}
