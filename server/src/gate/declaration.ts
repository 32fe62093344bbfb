/** One tool as declared to a model: name, description (with examples), JSON schema. */
export interface ToolDeclaration {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}
