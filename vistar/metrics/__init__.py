"""Pure metrics: functions of declared features, the prompt's control parameters and ontology parameters."""
