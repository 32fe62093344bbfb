export * from './messages.js';
export * from './wire.js';
