// check validates a decoded JSON message against the JSON Schema a
// SAINT.OS channel advertises (types, object properties, array items) and
// returns the first mismatch, or "" when the message fits.
export function check(schema, value, path = "$") {
  if (!schema || typeof schema !== "object") return "";
  const type = schema.type;
  const actual = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
  if (type === "object") {
    if (actual !== "object") return `${path}: want object, got ${actual}`;
    for (const [k, sub] of Object.entries(schema.properties ?? {})) {
      if (k in value && value[k] !== null) {
        const err = check(sub, value[k], `${path}.${k}`);
        if (err) return err;
      }
    }
  } else if (type === "array") {
    if (actual !== "array") return `${path}: want array, got ${actual}`;
    for (let i = 0; i < value.length; i++) {
      const err = check(schema.items, value[i], `${path}[${i}]`);
      if (err) return err;
    }
  } else if (type === "number" && actual !== "number") {
    return `${path}: want number, got ${actual}`;
  } else if (type === "string" && actual !== "string") {
    return `${path}: want string, got ${actual}`;
  } else if (type === "boolean" && actual !== "boolean") {
    return `${path}: want boolean, got ${actual}`;
  }
  return "";
}
