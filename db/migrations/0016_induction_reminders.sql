-- Reminders already mailed (issue 11), so the daily run mails each
-- assignment each kind of reminder once per day at most.
CREATE TABLE induction_reminders (
    user_induction_id INTEGER NOT NULL REFERENCES user_inductions(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    day TEXT NOT NULL,
    PRIMARY KEY (user_induction_id, kind, day)
) WITHOUT ROWID;
