/** The A2A wire versions the relay speaks: a request is answered in one, a push config is delivered in the one it was registered with. */
export const WIRE_VERSIONS = ['0.3', '1.0'] as const;
export type WireVersion = (typeof WIRE_VERSIONS)[number];
