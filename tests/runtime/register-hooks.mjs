// `node --import ./register-hooks.mjs reconcile-once.mjs …` (see expose-hooks.mjs).
import { register } from 'node:module';
register('./expose-hooks.mjs', import.meta.url);
