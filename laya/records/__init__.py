"""The stages' detail records: one typed, versioned record per stage (laya.core.record.Record), the contract
between the stage that writes reports/details/<file>.json and the report that reads it. They live apart from the
stages' code so that the report (and its DVC stage) depends on the records alone; this file imports none of them,
so each stage depends on its own record only.

    backbone.BackboneRecord   backbone@<name>      train.TrainRecord       train@<name>
    evaluate.EvaluateRecord   evaluate@<name>      sanity.SanityRecord     sanity@<name>
    depth.DepthRecord         depth@<name>         clt.CLTRecord           clt
    clt.CLTCompareRecord      clt_compare@<name>   clt.FrontierRecord      clt_frontier
"""
