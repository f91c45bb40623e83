/** Every entity of the tasks schema. */
export const TASKS_ENTITIES: Array<new () => object> = [];
