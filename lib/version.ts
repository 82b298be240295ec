/** The service's release (spec §9: catalog version 1 is understood by release 1.9). */
export const SERVICE_VERSION = "1.9.0";
