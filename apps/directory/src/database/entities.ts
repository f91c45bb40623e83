/** Every entity of the directory schema. */
export const DIRECTORY_ENTITIES: Array<new () => object> = [];
