-- The allocation ledger (seed 004, HADM), one schema for SQLite and PostgreSQL.
--
-- Sections start with "-- version N"; tui.allocations.ledger.migrate() applies every section above
-- the version stored in schema_version, each in its own transaction. Never edit a released
-- section: add a new one. Placeholders: {id} is the dialect's auto-increment primary key.
--
-- Amounts are integer resource-minutes. The allocation row carries running totals (credited,
-- held by executing pre-debits, debited) so that a pre-debit costs O(1); the CHECK on it is the
-- last guard against an overdraft, and the activity_sums view recomputes the same totals from the
-- activity tables for audits (tests compare the two).

-- version 1
CREATE TABLE project (
    id {id},
    name TEXT NOT NULL UNIQUE,
    gid BIGINT NOT NULL UNIQUE,
    account TEXT NOT NULL
);
CREATE TABLE allocation (
    id {id},
    project_id BIGINT NOT NULL REFERENCES project (id),
    resource TEXT NOT NULL CHECK (resource IN ('cpu', 'gpu')),
    category TEXT NOT NULL,
    start_date TEXT NOT NULL,
    end_date TEXT NOT NULL,
    credited BIGINT NOT NULL DEFAULT 0,
    held BIGINT NOT NULL DEFAULT 0,
    debited BIGINT NOT NULL DEFAULT 0,
    CHECK (start_date <= end_date),
    CHECK (held >= 0 AND debited >= 0 AND credited - held - debited >= 0)
);
CREATE TABLE credit (
    id {id},
    alloc_id BIGINT NOT NULL REFERENCES allocation (id),
    minutes BIGINT NOT NULL CHECK (minutes > 0),
    created TEXT NOT NULL
);
CREATE TABLE predebit (
    id {id},
    job_id TEXT NOT NULL UNIQUE,
    alloc_id BIGINT NOT NULL REFERENCES allocation (id),
    uid BIGINT NOT NULL,
    gid BIGINT NOT NULL,
    minutes BIGINT NOT NULL CHECK (minutes >= 0),
    status TEXT NOT NULL CHECK (status IN ('executing', 'completed', 'failed', 'node_fail', 'cancelled')),
    actual BIGINT,
    billed BIGINT,
    created TEXT NOT NULL,
    resolved TEXT
);
CREATE TABLE debit (
    alloc_id BIGINT NOT NULL REFERENCES allocation (id),
    uid BIGINT NOT NULL,
    minutes BIGINT NOT NULL CHECK (minutes >= 0),
    PRIMARY KEY (alloc_id, uid)
);
CREATE TABLE failure (
    id {id},
    job_id TEXT NOT NULL,
    alloc_id BIGINT NOT NULL REFERENCES allocation (id),
    uid BIGINT NOT NULL,
    gid BIGINT NOT NULL,
    minutes BIGINT NOT NULL,
    balance BIGINT NOT NULL,
    created TEXT NOT NULL
);

-- version 2
CREATE INDEX allocation_span ON allocation (project_id, resource, start_date);
CREATE INDEX predebit_alloc ON predebit (alloc_id, status);
CREATE INDEX predebit_gid ON predebit (gid, uid);
CREATE INDEX credit_alloc ON credit (alloc_id);
CREATE INDEX failure_alloc ON failure (alloc_id);
CREATE VIEW activity_sums AS
SELECT a.id AS alloc_id,
       COALESCE((SELECT SUM(c.minutes) FROM credit c WHERE c.alloc_id = a.id), 0) AS credited,
       COALESCE((SELECT SUM(p.minutes) FROM predebit p
                 WHERE p.alloc_id = a.id AND p.status = 'executing'), 0) AS held,
       COALESCE((SELECT SUM(d.minutes) FROM debit d WHERE d.alloc_id = a.id), 0) AS debited,
       COALESCE((SELECT SUM(p.billed) FROM predebit p
                 WHERE p.alloc_id = a.id AND p.status <> 'executing'), 0) AS billed
FROM allocation a;

-- version 3 postgresql
-- The pre-debit in one round trip (HADM's stored procedures): the advisory lock is held only for
-- the statements below instead of across client round trips. SQLite runs the same steps in
-- Python (tui.allocations.ledger.Ledger._predebit); the tests run both.
CREATE OR REPLACE FUNCTION fairtop_predebit(p_job TEXT, p_uid BIGINT, p_gid BIGINT, p_resource TEXT,
                                            p_minutes BIGINT, p_day TEXT, p_now TEXT)
RETURNS TABLE (outcome TEXT, alloc BIGINT, remaining BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    a_id BIGINT;
    bal BIGINT;
BEGIN
    SELECT a.id INTO a_id FROM allocation a JOIN project p ON p.id = a.project_id
     WHERE p.gid = p_gid AND a.resource = p_resource AND a.start_date <= p_day AND a.end_date >= p_day;
    IF a_id IS NULL THEN
        RETURN QUERY SELECT 'none'::TEXT, NULL::BIGINT, NULL::BIGINT;
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(1179910145, (a_id % 2147483648)::INT);
    IF EXISTS (SELECT 1 FROM predebit WHERE job_id = p_job) THEN
        RETURN QUERY SELECT 'duplicate'::TEXT, a_id, NULL::BIGINT;
        RETURN;
    END IF;
    SELECT credited - held - debited INTO bal FROM allocation WHERE id = a_id;
    IF p_minutes > bal THEN
        INSERT INTO failure (job_id, alloc_id, uid, gid, minutes, balance, created)
        VALUES (p_job, a_id, p_uid, p_gid, p_minutes, bal, p_now);
        RETURN QUERY SELECT 'overdraft'::TEXT, a_id, bal;
        RETURN;
    END IF;
    INSERT INTO predebit (job_id, alloc_id, uid, gid, minutes, status, created)
    VALUES (p_job, a_id, p_uid, p_gid, p_minutes, 'executing', p_now);
    UPDATE allocation SET held = held + p_minutes WHERE id = a_id;
    RETURN QUERY SELECT 'ok'::TEXT, a_id, bal - p_minutes;
END
$$;

-- version 4 postgresql
-- Group commit (tui.allocations.group_commit): the pre-debits waiting in the service run as one
-- statement, so one transaction and one commit (one WAL flush) serve them all. With one commit
-- each, a pre-debit held its allocation's advisory lock until its own commit was on disk: one
-- allocation went at the disk's flush rate (~190/s at 5 ms a flush). The jobs run one after the
-- other in the arrays' order, each as fairtop_predebit did alone; a job id racing in from another
-- transaction is a 'duplicate' (ON CONFLICT waits for that transaction), never an error that would
-- undo the batch. `idx` is the job's 1-based position in the arrays.
CREATE OR REPLACE FUNCTION fairtop_predebit_many(p_jobs TEXT[], p_uids BIGINT[], p_gids BIGINT[],
                                                 p_resources TEXT[], p_minutes BIGINT[], p_day TEXT,
                                                 p_now TEXT)
RETURNS TABLE (idx INT, outcome TEXT, alloc BIGINT, remaining BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    a_id BIGINT;
    bal BIGINT;
BEGIN
    FOR i IN 1 .. COALESCE(array_length(p_jobs, 1), 0) LOOP
        idx := i;
        alloc := NULL;
        remaining := NULL;
        SELECT a.id INTO a_id FROM allocation a JOIN project p ON p.id = a.project_id
         WHERE p.gid = p_gids[i] AND a.resource = p_resources[i] AND a.start_date <= p_day
           AND a.end_date >= p_day;
        IF a_id IS NULL THEN
            outcome := 'none';
        ELSE
            alloc := a_id;
            PERFORM pg_advisory_xact_lock(1179910145, (a_id % 2147483648)::INT);
            SELECT credited - held - debited INTO bal FROM allocation WHERE id = a_id;
            IF EXISTS (SELECT 1 FROM predebit WHERE job_id = p_jobs[i]) THEN
                outcome := 'duplicate';
            ELSIF p_minutes[i] > bal THEN
                INSERT INTO failure (job_id, alloc_id, uid, gid, minutes, balance, created)
                VALUES (p_jobs[i], a_id, p_uids[i], p_gids[i], p_minutes[i], bal, p_now);
                outcome := 'overdraft';
                remaining := bal;
            ELSE
                INSERT INTO predebit (job_id, alloc_id, uid, gid, minutes, status, created)
                VALUES (p_jobs[i], a_id, p_uids[i], p_gids[i], p_minutes[i], 'executing', p_now)
                ON CONFLICT (job_id) DO NOTHING;
                IF FOUND THEN
                    UPDATE allocation SET held = held + p_minutes[i] WHERE id = a_id;
                    outcome := 'ok';
                    remaining := bal - p_minutes[i];
                ELSE
                    outcome := 'duplicate';
                END IF;
            END IF;
        END IF;
        RETURN NEXT;
    END LOOP;
END
$$;

-- version 5 postgresql
-- One pre-debit is a batch of one: one copy of the steps (version 4), and a job id racing in
-- from another transaction answers 'duplicate' instead of an error.
CREATE OR REPLACE FUNCTION fairtop_predebit(p_job TEXT, p_uid BIGINT, p_gid BIGINT, p_resource TEXT,
                                            p_minutes BIGINT, p_day TEXT, p_now TEXT)
RETURNS TABLE (outcome TEXT, alloc BIGINT, remaining BIGINT)
LANGUAGE sql AS $$
    SELECT m.outcome, m.alloc, m.remaining
      FROM fairtop_predebit_many(ARRAY[p_job], ARRAY[p_uid], ARRAY[p_gid], ARRAY[p_resource],
                                 ARRAY[p_minutes], p_day, p_now) AS m
$$;
