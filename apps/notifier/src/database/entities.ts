/** Every entity of the notifier schema. */
export const NOTIFIER_ENTITIES: Array<new () => object> = [];
