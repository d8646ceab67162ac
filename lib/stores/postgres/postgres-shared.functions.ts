import type { PostgresLockTable } from './postgres-lock-table.js';

/**
 * When to try again a grant that a checked transaction holds up: it ends with that transaction's COMMIT,
 * which notifies nobody, so the waiter polls (briefly: checked transactions are meant to be short).
 */
const PINNED_RETRY_MS = 25;

/**
 * The read/write locks and semaphores of the lease table, as PL/pgSQL functions created by the migration.
 *
 * A shaped key is one row of the lease table, like a plain one, with every hold in the row itself (the
 * `shared` column: `{ m: mode, h: { token: { f: fence, o: holder, e: expiry ms } }, w: { token: until ms } }`,
 * `w` the writers turned away that keep new readers out). Keeping the holds in the row is what makes a
 * grant safe under concurrency: each function locks the row first and then reads its latest version, so
 * two readers counted at once can never both miss the other, which holds in rows of their own, counted
 * from a statement's snapshot, could. The row looks held to the plain protocol (`token` is the empty string,
 * which no ownership token can be; `expires_at` the last hold's expiry), so plain locks and shaped ones of
 * a key exclude each other with the plain statements unchanged. Every grant moves the row's `fence` up, so
 * a transaction that checked a hold (`assertLeaseHeld`, FOR KEY SHARE) keeps every other grant of the key
 * out until it ends, while renewals and releases, which change no key column, go through.
 *
 * The rules are the Redis store's (redis/scripts/shared-acquire.script.ts): readers together while no
 * writer waits, one writer alone, at most N permit holders (N of the granting call), holds whose TTL ran
 * out dropped at the next look. Times are the database clock's, in milliseconds since the epoch.
 */
export function sharedFunctionStatements(table: PostgresLockTable): string[] {
  const t = table.qualified;
  const f = table.sharedFunctions;
  const nowMs = `(extract(epoch FROM clock_timestamp()) * 1000)::float8`;
  // The row's expiry: the last hold's, rounded up to the microsecond (timestamptz's precision), so the row
  // never looks free to the plain protocol while a hold in it is still live.
  const lastExpiry = (holds: string): string => `(SELECT to_timestamp(ceil(max((value->>'e')::float8) * 1000) / 1000000) FROM jsonb_each(${holds}))`;
  const live = (map: string, expiry: string): string =>
    `(SELECT coalesce(jsonb_object_agg(key, value), '{}'::jsonb) FROM jsonb_each(${map}) WHERE ${expiry} > v_now)`;
  const nextFence = `setval(${table.sequenceLiteral}, greatest(nextval(${table.sequenceLiteral}), (extract(epoch FROM clock_timestamp()) * 1000000)::bigint))`;

  const acquire = `CREATE OR REPLACE FUNCTION ${f.acquire}(p_name text, p_token text, p_mode text, p_permits bigint, p_lease_ms float8, p_waiting_ms float8, p_holder text,
  OUT granted_fence bigint, OUT denied_ttl_ms bigint) LANGUAGE plpgsql AS $body$
DECLARE
  r record;
  v_now float8;
  v_mode text;
  v_holds jsonb := '{}'::jsonb;
  v_writers jsonb := '{}'::jsonb;
  v_held bigint;
  v_granted boolean;
  v_pinned boolean := false;
  v_next jsonb;
BEGIN
  -- A plainly held key is turned away from a read without a lock, as the plain acquire does: waiters
  -- polling it neither lock its row nor queue behind a transaction that checked its lease.
  SELECT l.token, l.expires_at INTO r FROM ${t} l WHERE l.name = p_name;
  IF FOUND AND r.token <> '' AND r.expires_at > clock_timestamp() THEN
    denied_ttl_ms := greatest(1, ceil(extract(epoch FROM r.expires_at - clock_timestamp()) * 1000))::bigint;
    RETURN;
  END IF;
  -- A key seen for the first time gets a released row to lock; a sweep may delete it before the lock, so
  -- this repeats until the row is there.
  LOOP
    INSERT INTO ${t} (name, token, fence, holder, acquired_at, expires_at)
    VALUES (p_name, NULL, 0, p_holder, clock_timestamp(), clock_timestamp()) ON CONFLICT (name) DO NOTHING;
    SELECT l.token, l.fence, l.expires_at, l.shared INTO r FROM ${t} l WHERE l.name = p_name FOR NO KEY UPDATE;
    EXIT WHEN FOUND;
  END LOOP;
  v_now := ${nowMs};
  IF r.token <> '' AND r.expires_at > clock_timestamp() THEN
    -- A plain lock holds the key.
    denied_ttl_ms := greatest(1, ceil(extract(epoch FROM r.expires_at - clock_timestamp()) * 1000))::bigint;
    RETURN;
  END IF;
  IF r.shared IS NOT NULL AND (r.token IS NULL OR r.token = '') THEN
    v_mode := r.shared->>'m';
    IF r.token = '' THEN v_holds := ${live("r.shared->'h'", "(value->>'e')::float8")}; END IF;
    v_writers := ${live("r.shared->'w'", 'value::text::float8')};
  END IF;
  IF v_holds ? p_token THEN
    -- A re-sent acquisition of a holding token: the same grant.
    granted_fence := (v_holds->p_token->>'f')::bigint;
    RETURN;
  END IF;
  v_held := (SELECT count(*) FROM jsonb_object_keys(v_holds));
  IF v_held = 0 THEN
    v_granted := p_mode <> 'read' OR v_writers = '{}'::jsonb;
  ELSE
    v_granted := v_mode = p_mode AND CASE p_mode
      WHEN 'read' THEN v_writers = '{}'::jsonb
      WHEN 'permits' THEN v_held < p_permits
      ELSE false END;
  END IF;
  IF v_granted THEN
    -- A grant moves the row's fence, a key column: a transaction that checked a hold of the key (FOR KEY
    -- SHARE, see assertLeaseHeld) keeps it still until it ends. Waiting for that here, with this row locked,
    -- would hold up the other holders' renewals and releases behind it; the caller comes back instead.
    PERFORM 1 FROM ${t} l WHERE l.name = p_name FOR UPDATE SKIP LOCKED;
    v_pinned := NOT FOUND;
    v_granted := FOUND;
  END IF;
  IF NOT v_granted THEN
    IF p_mode = 'write' AND least(p_waiting_ms, p_lease_ms) > 0 THEN
      v_writers := v_writers || jsonb_build_object(p_token, v_now + least(p_waiting_ms, p_lease_ms));
    END IF;
    v_next := CASE WHEN v_held = 0 AND v_writers = '{}'::jsonb THEN NULL
      ELSE jsonb_build_object('m', coalesce(v_mode, p_mode), 'h', v_holds, 'w', v_writers) END;
    -- A denial writes only what changed (a writer's mark, holds that ran out): polling readers write nothing.
    IF v_next IS DISTINCT FROM r.shared OR (v_held = 0 AND r.token IS NOT NULL) THEN
      UPDATE ${t} l SET shared = v_next, token = CASE WHEN v_held = 0 THEN NULL ELSE l.token END WHERE l.name = p_name;
    END IF;
    denied_ttl_ms := CASE WHEN v_pinned THEN ${PINNED_RETRY_MS} ELSE greatest(1, ceil(coalesce(
      (SELECT min((value->>'e')::float8) FROM jsonb_each(v_holds)),
      (SELECT min(value::text::float8) FROM jsonb_each(v_writers))) - v_now))::bigint END;
    RETURN;
  END IF;
  granted_fence := greatest(${nextFence}, r.fence + 1);
  v_holds := v_holds || jsonb_build_object(p_token, jsonb_build_object('f', granted_fence, 'o', p_holder, 'e', v_now + p_lease_ms));
  UPDATE ${t} l SET token = '', fence = granted_fence, holder = p_holder, acquired_at = clock_timestamp(),
    expires_at = ${lastExpiry('v_holds')},
    shared = jsonb_build_object('m', p_mode, 'h', v_holds, 'w', v_writers - p_token)
  WHERE l.name = p_name;
END
$body$`;

  // Keep ms > 0 (minimum hold): the hold stays until then and nobody is woken. Otherwise it goes, the key's
  // channel is notified, and (as a plain release) the commit does not wait for its WAL flush.
  const release = `CREATE OR REPLACE FUNCTION ${f.release}(p_name text, p_token text, p_keep_ms float8, p_channel text)
  RETURNS boolean LANGUAGE plpgsql AS $body$
DECLARE
  v_shared jsonb;
  v_now float8;
  v_holds jsonb;
  v_writers jsonb;
BEGIN
  SELECT l.shared INTO v_shared FROM ${t} l WHERE l.name = p_name AND l.token = '' FOR NO KEY UPDATE;
  v_now := ${nowMs};
  IF v_shared IS NULL OR coalesce((v_shared->'h'->p_token->>'e')::float8, 0) <= v_now THEN RETURN false; END IF;
  IF p_keep_ms > 0 THEN
    v_holds := jsonb_set(v_shared->'h', ARRAY[p_token, 'e'], to_jsonb(v_now + p_keep_ms));
  ELSE
    PERFORM set_config('synchronous_commit', 'off', true);
    v_holds := ${live("v_shared->'h'", "(value->>'e')::float8")} - p_token;
    PERFORM pg_notify(p_channel, '');
  END IF;
  IF v_holds = '{}'::jsonb THEN
    v_writers := ${live("v_shared->'w'", 'value::text::float8')};
    UPDATE ${t} l SET token = NULL, expires_at = clock_timestamp(),
      shared = CASE WHEN v_writers = '{}'::jsonb THEN NULL ELSE jsonb_build_object('m', v_shared->>'m', 'h', v_holds, 'w', v_writers) END
    WHERE l.name = p_name;
  ELSE
    UPDATE ${t} l SET expires_at = ${lastExpiry('v_holds')}, shared = jsonb_set(v_shared, '{h}', v_holds) WHERE l.name = p_name;
  END IF;
  RETURN true;
END
$body$`;

  // Rows are locked in name order, so two batches over the same keys never deadlock each other.
  const renew = `CREATE OR REPLACE FUNCTION ${f.renew}(p_names text[], p_tokens text[], p_lease_ms float8[])
  RETURNS SETOF bigint LANGUAGE plpgsql AS $body$
DECLARE
  q record;
  v_shared jsonb;
  v_now float8;
BEGIN
  FOR q IN SELECT * FROM unnest(p_names, p_tokens, p_lease_ms) WITH ORDINALITY AS u(name, token, lease_ms, i) ORDER BY u.name, u.i LOOP
    SELECT l.shared INTO v_shared FROM ${t} l WHERE l.name = q.name AND l.token = '' FOR NO KEY UPDATE;
    v_now := ${nowMs};
    CONTINUE WHEN v_shared IS NULL OR coalesce((v_shared->'h'->q.token->>'e')::float8, 0) <= v_now;
    v_shared := jsonb_set(v_shared, ARRAY['h', q.token, 'e'], to_jsonb(v_now + q.lease_ms));
    UPDATE ${t} l SET shared = v_shared, expires_at = ${lastExpiry("v_shared->'h'")} WHERE l.name = q.name;
    RETURN NEXT q.i;
  END LOOP;
END
$body$`;

  // The runbook's override: one hold named by its fencing token, or every hold without one. No row when
  // no shaped hold is live (the plain statement answers then); `taken` false with a live hold described
  // when the named one is not among them.
  const drop = `CREATE OR REPLACE FUNCTION ${f.drop}(p_name text, p_fence bigint, p_channel text,
  OUT d_fence bigint, OUT d_holder text, OUT d_ttl_ms bigint, OUT d_mode text, OUT d_taken boolean) RETURNS SETOF record LANGUAGE plpgsql AS $body$
DECLARE
  v_shared jsonb;
  v_now float8;
  v_holds jsonb;
  v_hit record;
BEGIN
  SELECT l.shared INTO v_shared FROM ${t} l WHERE l.name = p_name AND l.token = '' FOR NO KEY UPDATE;
  v_now := ${nowMs};
  IF v_shared IS NULL THEN RETURN; END IF;
  v_holds := ${live("v_shared->'h'", "(value->>'e')::float8")};
  SELECT key, value INTO v_hit FROM jsonb_each(v_holds)
  ORDER BY ((value->>'f')::bigint = p_fence) DESC, (value->>'f')::bigint LIMIT 1;
  IF NOT FOUND THEN RETURN; END IF;
  d_fence := (v_hit.value->>'f')::bigint;
  d_holder := v_hit.value->>'o';
  d_ttl_ms := ceil((v_hit.value->>'e')::float8 - v_now)::bigint;
  d_mode := v_shared->>'m';
  d_taken := p_fence IS NULL OR d_fence = p_fence;
  IF d_taken THEN
    v_holds := CASE WHEN p_fence IS NULL THEN '{}'::jsonb ELSE v_holds - v_hit.key END;
    IF v_holds = '{}'::jsonb THEN
      UPDATE ${t} l SET token = NULL, expires_at = clock_timestamp(), shared = NULL WHERE l.name = p_name;
    ELSE
      UPDATE ${t} l SET expires_at = ${lastExpiry('v_holds')}, shared = jsonb_set(v_shared, '{h}', v_holds) WHERE l.name = p_name;
    END IF;
    PERFORM pg_notify(p_channel, '');
  END IF;
  RETURN NEXT;
END
$body$`;

  return [acquire, release, renew, drop];
}
