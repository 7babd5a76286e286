// Node module-customisation hook for reconcile-once.mjs only. The runtime bundles its reconciler
// (`reconcileInterruptedSubmission`) and the helpers its coordinator calls it with into internal
// dist chunks without a stable export name. This hook appends one `export { … }` line to each
// chunk that defines one of them, so the test drives the runtime's own, unchanged functions
// instead of a re-implementation. Nothing else in a chunk is changed.
const NAMES = ['reconcileInterruptedSubmission', 'submissionSyntheticRequest', 'LEASE_DURATION_MS', 'agentStreamPath', 'isStreamExcludedEvent'];

export async function load(url, context, nextLoad) {
	const result = await nextLoad(url, context);
	if (!url.includes('/@flue/runtime/dist/') || !url.endsWith('.mjs') || result.format !== 'module') return result;
	const source = typeof result.source === 'string' ? result.source : Buffer.from(result.source).toString('utf8');
	const defined = NAMES.filter((n) => source.includes(`function ${n}(`) || source.includes(`const ${n} =`));
	if (defined.length === 0) return result;
	const line = `\nexport { ${defined.map((n) => `${n} as __turnscope_${n}`).join(', ')} };\n`;
	return { ...result, source: source + line, shortCircuit: true };
}
