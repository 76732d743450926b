/**
 * A client profile is the identity a probe presents: what the app's own MCP client sends.
 * Kept as data so that other clients (newer protocol eras) can be attested side by side later.
 */
export interface ClientProfile {
  /** Short id used in reports and the history store. */
  id: string;
  protocolVersion: string;
  clientInfo: { name: string; version: string };
  capabilities: Record<string, unknown>;
}

/** The app's client ("Kai 9000", classic McpClient): protocol 2024-11-05, empty capabilities. */
export const KAI_9000: ClientProfile = {
  id: 'kai-9000',
  protocolVersion: '2024-11-05',
  clientInfo: { name: 'Kai 9000', version: '1.0' },
  capabilities: {},
};

export const CLIENT_PROFILES: Record<string, ClientProfile> = { [KAI_9000.id]: KAI_9000 };

/**
 * Edges (Cloudflare and others) answer 403 to non-browser agents such as `Python-urllib`
 * (observed on five of the thirteen shipped hosts), so the default probe looks like a browser.
 */
export const BROWSER_USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 onetap/0.1';
