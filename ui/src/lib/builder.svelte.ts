/**
 * The experiment builder's draft, at module level so that a half-written experiment survives
 * a visit to another screen (to import a dataset or add a judge, say).
 */
import { defaultDraft, type ExperimentDraft } from "./experiment";

export const draft = $state<ExperimentDraft>(defaultDraft());

/** Whether the user asked to replace an experiment of the same name with other content. */
export const builderOptions = $state({ replace: false, showToml: false });
