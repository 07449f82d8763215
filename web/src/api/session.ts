/**
 * The management key of this browser tab: kept in sessionStorage only (gone when the tab closes,
 * never in localStorage, a cookie or the URL), and sent only with requests to this origin.
 */
const STORAGE_KEY = "gatehouse.managementKey";

export const getKey = (): string | null => sessionStorage.getItem(STORAGE_KEY);
export const setKey = (key: string) => sessionStorage.setItem(STORAGE_KEY, key);
export const clearKey = () => sessionStorage.removeItem(STORAGE_KEY);
