variable "vpc_id" {
  description = "VPC whose traffic is logged"
  type        = string
}

resource "aws_cloudwatch_log_group" "flow" {
  name              = "/vpc/${var.vpc_id}/flow-logs"
  retention_in_days = 30
}

resource "aws_flow_log" "this" {
  vpc_id          = var.vpc_id
  traffic_type    = "ALL"
  log_destination = aws_cloudwatch_log_group.flow.arn
}

output "log_group_name" {
  description = "Where the flow logs go"
  value       = aws_cloudwatch_log_group.flow.name
}
