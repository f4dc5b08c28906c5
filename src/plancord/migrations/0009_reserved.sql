-- Reserved: version 9 belongs to a change developed alongside 0010 and merged separately.
-- Changes nothing; replaced by that change's own 0009 file when both are merged.
SELECT 1;
