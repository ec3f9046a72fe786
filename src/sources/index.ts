/** The sources as the stages see them: the Source shape, every API that has it, and how far they are all read. */
export type { Source, SourceClient, SourceEnv, SourceName, SyncRequest, SyncResult, SyncStep } from './source.js';
export { SOURCES, sourcesReach } from './registry.js';
export { SyncAbortedError } from './common/abort.js';
