/** The process supervisor for language servers and debug adapters; see README.md. */
export {
  ProcessSupervisor,
  SUPERVISOR_DEFAULTS,
  type ExitEvent,
  type ProcessSupervisorOptions,
  type SupervisorStatus
} from './process-supervisor.js';
export { GroupProcess, describeExit, type ExitInfo, type SpawnSpec } from './process-group.js';
export { SupervisorError, type SupervisorErrorCode } from './supervisor-error.js';
