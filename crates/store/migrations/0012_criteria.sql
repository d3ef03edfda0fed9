-- Several human labels per item (issue 18): each item's labels on the dataset's criteria
-- (JSON {"criterion": "label text"}, NULL where it has none), and the dataset's criteria
-- with what their labels are (JSON of [core::dataset::Criterion]).
ALTER TABLE items ADD COLUMN human_labels TEXT;
ALTER TABLE datasets ADD COLUMN criteria TEXT NOT NULL DEFAULT '[]';
